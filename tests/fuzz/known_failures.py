"""Entry points the fuzz harness finds failing in files other helpers own (generated from a CI-profile census;
strict xfails: an entry must go with its fix).  Owner in brackets: H1 bandit learners, H2 linear/kernel/oco/
sklearn_api, H8 datasets.  Several share one root cause: nolo._validation.check_array accepts complex input
(silently dropping the imaginary part, issue 14 item 11)."""

KNOWN = {
}
