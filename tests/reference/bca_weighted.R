# Issue #31, item 7: R boot pools the stratified jackknife influence values unweighted.
# Run: Rscript tests/reference/bca_weighted.R (boot 1.3); prints
#   R boot empinf(jack) pooled a = 0.00235605805815756
#   R boot weighted l/n_d a = 0.0568313914699762
library(boot)
small <- c(rep(0,10), 0.25, 0.25, 0.5, 1, 1)
large <- (0:119 %% 5) / 4
d <- data.frame(v = c(small, large), s = c(rep(1,15), rep(2,120)))
f <- function(d, i) { x <- d[i,]; mean(tapply(x$v, x$s, mean)) }
set.seed(1)
b <- boot(d, f, R = 4000, strata = d$s)
L <- empinf(b, type = "jack")
cat(sprintf("R boot empinf(jack) pooled a = %.15g\n", sum(L^3) / (6 * sum(L^2)^1.5)))
cat(sprintf("R boot weighted l/n_d a = %.15g\n", { n <- ifelse(d$s == 1, 15, 120); l <- L / n; sum(l^3) / (6 * sum(l^2)^1.5) }))
print(boot.ci(b, type = "bca")$bca)
