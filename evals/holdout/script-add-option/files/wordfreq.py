import argparse
import collections
import re


def main():
    parser = argparse.ArgumentParser(description="Count words in a text file.")
    parser.add_argument("file")
    args = parser.parse_args()
    with open(args.file, encoding="utf-8") as f:
        words = re.findall(r"[a-z']+", f.read().lower())
    counts = collections.Counter(words)
    for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{word}\t{n}")


if __name__ == "__main__":
    main()
