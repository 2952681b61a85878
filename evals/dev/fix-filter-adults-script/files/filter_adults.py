import csv
import sys

src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    rows = list(csv.reader(f))

with open(dst, "w") as out:
    writer = csv.writer(out)
    for row in rows[1:]:
        if row[1] > "18":
            writer.writerow(row)
