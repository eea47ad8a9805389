"""Pure verifiers: math answers, code results, repository test results."""
