"""The benchmark: implementations beside cuBLAS, as data.

- `run`: `gemmlab bench`, every implementation timed interleaved with cuBLAS, then checked;
- `studies`, `randomshapes`, `summary`: controlled studies, sweeps, random draws and their summaries;
- `results`: the JSON record, its schema and file names (what reports and plots read);
- `report`, `colours`: Markdown tables and PNG plots from a record;
- `inspect`: registers, shared memory and SASS of the kernels behind each implementation.
Figures are taken by `gemmlab.measure`, below this package.
"""
