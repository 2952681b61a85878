import sys

def main(path):
    total = 0
    count = 0
    for line in open(path):
        total += int(line)
        count += 1
    print(total // count)

main(sys.argv[1])
