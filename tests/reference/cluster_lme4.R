# The four-level REML fits of tests/fixtures/cluster/unbalanced.csv by lme4, which the test
# components::cluster::tests::unbalanced_clusters_equal_lme4 records.
#
# Run from the repository root:
#     Rscript tests/reference/cluster_lme4.R
suppressMessages(library(lme4))
d <- read.csv("tests/fixtures/cluster/unbalanced.csv", colClasses = c(y = "numeric"))
d$trajectory <- factor(d$trajectory)
show <- function(label, fit) {
  vc <- as.data.frame(VarCorr(fit))
  cat(label, "\n")
  for (i in seq_len(nrow(vc))) cat(sprintf("  %s %.12g\n", vc$grp[i], vc$vcov[i]))
  cat(sprintf("  theta %s\n", paste(sprintf("%.10g", getME(fit, "theta")), collapse = " ")))
  cat(sprintf("  REMLcrit %.10f\n", REMLcrit(fit)))
}
ctl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhobeg = 2e-3, rhoend = 1e-12, maxfun = 1e5),
                   check.conv.singular = "ignore")
for (s in c("a", "b")) {
  fit <- lmer(y ~ 1 + (1 | cluster) + (1 | cluster:question) + (1 | cluster:question:trajectory),
              data = d[d$dataset == s, ], REML = TRUE, control = ctl)
  show(paste("stratum", s), fit)
}
fit <- lmer(y ~ dataset + (1 | cluster) + (1 | cluster:question) + (1 | cluster:question:trajectory),
            data = d, REML = TRUE, control = ctl)
show("pooled", fit)
cat("lme4", as.character(packageVersion("lme4")), "R", R.version.string, "\n")
