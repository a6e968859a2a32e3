"""Moved to `support.prerequisites`; this name stays importable only while tests move over."""

from support.prerequisites import IN_CI as IN_CI
from support.prerequisites import REPO_ROOT as REPO_ROOT
from support.prerequisites import SHARED_DIR as SHARED_DIR
from support.prerequisites import missing_prerequisite as missing_prerequisite
from support.prerequisites import shared_path as shared_path
