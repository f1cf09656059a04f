"""A `DatasetReport` for people and programs, in four modules, one thing each.

`verdicts` says what the report concludes (harvestable, not, could not check; the codes
to fix); `text` renders it for a repository manager, with the signpost table;
`jsonview` renders it for programs, in the documented JSON schema; `stored` is the
part a sync keeps on the frontier row, capped. Import from the module that holds a name.
"""
