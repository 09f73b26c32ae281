"""The capture engines and the scheduler service that drives them."""
