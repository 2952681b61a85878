#!/usr/bin/env bash
src=$1
dest=$2
mkdir $dest
for f in $(ls $src | grep .txt); do
    cp $src/$f $dest/
done
echo "backed up to $dest"
