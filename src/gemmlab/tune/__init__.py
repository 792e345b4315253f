"""`gemmlab tune` and `default`: search spaces per rung (`spaces`), shape classes (`classes`), the
tune record (`record`), the search on a GPU (`search`) and the registry's `default` (`default`)."""
