"""`gemmlab tune`: the search of a rung's space per shape class on this GPU (`search`), calibration
from random sweeps (`calibrate`) and the one-command pipeline (`pipeline`). What a record makes
`default` run is `gemmlab.policy`'s."""
