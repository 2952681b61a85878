import csv
import sys

def main():
    rows = list(csv.reader(open(sys.argv[1], newline="")))
    header, body = rows[0], rows[1:]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in body:
        print("| " + " | ".join(row) + " |")

main()
