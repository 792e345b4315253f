"""The benchmark: implementations beside cuBLAS, as data: `run` times them (`gemmlab bench`),
`studies`, `randomshapes` and `summary` make studies and sweeps, `results` is the JSON record,
`report` and `colours` turn it into Markdown and plots, `inspect` reads the kernels' resources
and SASS. Figures are taken by `gemmlab.measure`, below this package."""
