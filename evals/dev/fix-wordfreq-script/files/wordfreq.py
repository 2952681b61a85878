import sys
from collections import Counter

def main(path):
    counts = Counter()
    for line in open(path):
        words = line.split(" ")
        counts[words[0]] += 1
        for w in words[1:]:
            counts[w] += 1
    for word, n in counts.most_common(3):
        print(word, n)

main(sys.argv[1])
