set terminal png size 900,560
set output '2026-11-22-serve-h100-d00fa5b.png'
set title 'ncast-server on loopback: realtime peers at 768k (n=128, L=1024), largest passing: 18526'
set xlabel 'concurrent peers'
set ylabel 'late segments (%)'
set y2label 'server CPU (% of one core)'
set ytics nomirror
set y2tics
set grid
set key top left
set yrange [0:*]
set y2range [0:*]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2
plot '2026-11-22-serve-h100-d00fa5b.dat' using 1:2 with linespoints title 'late segments', '2026-11-22-serve-h100-d00fa5b.dat' using 1:3 axes x1y2 with linespoints title 'server CPU'
