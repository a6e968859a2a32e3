"""Finding flag keys and their aliases in a git repository's files (`flagstaff code-refs`): the
alias conventions, the scan configuration, one combined matcher per run, hunks with context lines,
and the git edge that lists tracked files. Only `repository` runs git or reads files."""
