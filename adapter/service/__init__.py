"""The long-running process: the scheduler, signals and reload, and logging set-up."""
