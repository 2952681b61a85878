import sys

path, column = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
header = lines[0].split(",")
idx = header.index(column)
total = 0
for line in lines[1:]:
    total += float(line.split(",")[idx])
print(round(total, 2))
