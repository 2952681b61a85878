import sys


def median(values):
    values = sorted(values)
    middle = len(values) // 2
    return values[middle]


def main(path):
    with open(path) as f:
        numbers = [line.strip() for line in f]
    print(median(numbers))


if __name__ == "__main__":
    main(sys.argv[1])
