"""The window's behaviour, one concern per controller: model jobs, edits, the open video,
export, the project file. Each gets the few widgets and objects it needs and nothing else."""
