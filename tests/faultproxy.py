"""Moved to `support.fault_proxy`; this name stays importable only while tests move over."""

from support.fault_proxy import POLL_PATHS as POLL_PATHS
from support.fault_proxy import STREAM_PATHS as STREAM_PATHS
from support.fault_proxy import Fault as Fault
from support.fault_proxy import FaultProxy as FaultProxy
