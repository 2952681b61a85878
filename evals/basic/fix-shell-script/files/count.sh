n=$(ls *.txt | wc -l
echo $n
