"""Entry points the fuzz harness finds failing in files other helpers own (generated from a CI-profile census;
strict xfails: an entry must go with its fix).  Owner in brackets: H1 bandit learners, H2 linear/kernel/oco/
sklearn_api, H8 datasets.  Several share one root cause: nolo._validation.check_array accepts complex input
(silently dropping the imaginary part, issue 14 item 11)."""

KNOWN = {
    'CleanKernelOGD.set_params': "[H2] rejected_unnamed x3; e.g. 'bogus': ParameterError: name must be one of 'squared', 'exponential', 'logistic', 'smoothed_hinge', 'smoothed",
    'KernelOGDRegression.learn_stream(X)': '[H2] rejected_unnamed x4; e.g. empty (0, 4): ParameterError: y must have shape (0), got (6,)',
    'NoisyKernelLearner.learn(oracle copies)': '[H2] lenient x8; e.g. nan at 0: accepted',
    'RCNBF.set_params': '[H1] lenient x5; e.g. inf: accepted',
    'load_svmlight(path)': '[H8] lenient x4; e.g. 0 random bytes: accepted',
}
