# lme4 reference for `stats variance panel.csv --contrast adaptive-open` (issue #31 item 5):
# the contrast of the cells present in both arms (the unpaired ones dropped), fitted by REML,
# lmer(score ~ 1 + (1|question) + (1|question:trajectory)), with the optimiser's tolerances
# tightened (nloptwrap's defaults stop ~1e-6 short of the optimum).
# Run: cd tests/reference/unpaired && Rscript reference.R > reference.out
suppressMessages(library(lme4))
p <- read.csv("panel.csv", colClasses = c("character", "character", "character", "character",
                                          "character", "numeric"))
o <- p[p$arm == "open", ]
a <- p[p$arm == "adaptive", ]
m <- merge(o, a, by = c("dataset", "question", "trajectory", "read"), suffixes = c(".o", ".a"))
m$score <- m$f1.a - m$f1.o
cat(sprintf("paired cells: %d (of %d open and %d adaptive rows), %d questions, %d trajectories\n",
            nrow(m), nrow(o), nrow(a), length(unique(m$question)),
            length(unique(paste(m$question, m$trajectory)))))
fit <- lmer(score ~ 1 + (1 | question) + (1 | question:trajectory), data = m, REML = TRUE,
            control = lmerControl(optCtrl = list(xtol_abs = 1e-14, ftol_abs = 1e-16,
                                                 xtol_rel = 1e-14, ftol_rel = 1e-16,
                                                 maxeval = 100000),
                                  check.conv.singular = "ignore"))
vc <- as.data.frame(VarCorr(fit))
v <- setNames(vc$vcov, vc$grp)
cat(sprintf("sigma2_question   = %.17g\n", v["question"]))
cat(sprintf("sigma2_trajectory = %.17g\n", v["question:trajectory"]))
cat(sprintf("sigma2_read       = %.17g\n", v["Residual"]))
cat(sprintf("mean (intercept)  = %.17g\n", fixef(fit)[[1]]))
cat(sprintf("REML criterion    = %.17g\n", -2 * as.numeric(logLik(fit))))
cat(sprintf("%s, lme4 %s\n", R.version.string, packageVersion("lme4")))
