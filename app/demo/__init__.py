"""The built-in demonstration: the sandbox and the capture service on a sped-up clock."""

# Two clock hours per real minute. The rule book's hour of waiting after the queue ends (plus
# its safety margin) separates the resumo from the complete NF-e after the Ciência: at 120 the
# complete NF-e arrives about 35 real seconds in, so a 60-second run shows every step.
DEMO_SPEED = 120.0
