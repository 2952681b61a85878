def add_up(n):
    total = 0
    for i in range(1, n + 1):
        total += i
    return totl

print(add_up(10))
