# LT t path n service model ratio nops: windows of 64 sums per path, flushed on each non-LT line
/^LT / { p=$3; c[p]++; sv[p]+=$5; md[p]+=$6; rq[p]+=$4; if (!(p in t0)) t0[p]=$2; t1[p]=$2;
  if (c[p]==64) { printf "W %s %.0f-%.0fms req=%d svc/req=%.1f ratio=%.2f\n", p, t0[p], t1[p], rq[p], sv[p]/rq[p], sv[p]/md[p]; delete c[p]; delete sv[p]; delete md[p]; delete rq[p]; delete t0[p] }
  next }
{ for (p in c) if (c[p]) { printf "W %s %.0f-%.0fms req=%d svc/req=%.1f ratio=%.2f (partial)\n", p, t0[p], t1[p], rq[p], sv[p]/rq[p], sv[p]/md[p]; } delete c; delete sv; delete md; delete rq; delete t0; print }
