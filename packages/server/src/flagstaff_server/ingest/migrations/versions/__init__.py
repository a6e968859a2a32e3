"""The analytics database's revisions, oldest first."""
