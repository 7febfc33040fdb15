"""Entry points the fuzz harness finds failing in files other helpers own (generated from a CI-profile census;
strict xfails: an entry must go with its fix).  Owner in brackets: H1 bandit learners, H2 linear/kernel/oco/
sklearn_api, H8 datasets.  Several share one root cause: nolo._validation.check_array accepts complex input
(silently dropping the imaginary part, issue 14 item 11)."""

KNOWN = {
    'KnownCovarianceRegressor.fit(X)': '[H2] lenient x2, rejected_unnamed x7; e.g. complex: accepted',
    'NoisyKernelClassifier.fit(X)': '[H2] lenient x2, state_changed x9; e.g. shape (10, 3, 8): accepted',
    'NoisyKernelClassifier.partial_fit(X)': '[H2] rejected_unnamed x9; e.g. nan at 0: ParameterError: data must contain only finite values (no NaN or inf)',
    'NoisyKernelRegressor.fit(X)': "[H2] state_changed x5; e.g. nan at 0: ParameterError: data must contain only finite values (no NaN or inf); changed ['learner_.state:coef_",
    'NoisyKernelRegressor.partial_fit(X)': '[H2] lenient x2, rejected_unnamed x8; e.g. complex: accepted',
    'TwoCopyRegressor.partial_fit(X)': '[H2] rejected_unnamed x4; e.g. empty (0, 3, 3): ParameterError: y must have shape (0), got (10,)',
}
