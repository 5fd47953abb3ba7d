// Placeholder until the sample app lands (issue 4).
