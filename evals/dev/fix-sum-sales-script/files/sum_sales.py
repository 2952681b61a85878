import sys

total = 0
for line in open(sys.argv[1]):
    region, amount = line.split(",")
    total += int(amount)
print("Total:", total)
