# docs/bench-per-call.svg: per-call cost by path and mode, from the data
# `sandpit bench --plot=FILE` writes.  gnuplot -e "data='FILE'; out='SVG'"
set terminal svg size 960,520 dynamic enhanced font "sans,12" background rgb "white"
set output out
set title "sandpit: cost of one call by path and mode (median; bars: p10 to p90)"
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border rgb "#333333"
set logscale y
set yrange [1e-8:*]
set format y "%.0s %cs"
set ylabel "time per call (log scale)"
set xtics noenhanced scale 0 rotate by -15 offset -1,0
set key top left
set grid ytics mytics lc rgb "#dddddd"
# the data is in ns; the axis in seconds so that %c gives the prefix
plot data using ($2*1e-9):($3*1e-9):($4*1e-9):xtic(1) title "native" lc rgb "#555555", \
     ''   using ($5*1e-9):($6*1e-9):($7*1e-9) title "strict" lc rgb "#d95f02", \
     ''   using ($8*1e-9):($9*1e-9):($10*1e-9) title "filter" lc rgb "#1b9e77"
