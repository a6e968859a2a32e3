"""Flagstaff Python SDK: local evaluation with the Flagstaff core, fed by streaming with polling
fallback across regions, a disk cache, data files or test data.

Speaks LaunchDarkly's server-side protocols (FDv1 and FDv2), so it works against Flagstaff, a
Flagstaff relay or any LaunchDarkly-compatible service.
"""

from flagstaff_core import (
    Context,
    ErrorKind,
    EvaluationDetail,
    Reason,
    ReasonKind,
    ValueType,
)

from flagstaff_sdk.client import AsyncClient, Client
from flagstaff_sdk.config import LAUNCHDARKLY, Config, Endpoint, Timing
from flagstaff_sdk.context import ContextBuilder
from flagstaff_sdk.data_file import FileSource
from flagstaff_sdk.errors import ConfigError, DataFileError, SdkError
from flagstaff_sdk.event_sink import EventSink, NullEventSink
from flagstaff_sdk.flags_state import FeatureFlagsState
from flagstaff_sdk.notifier import FlagChange, FlagValueChange
from flagstaff_sdk.source import DataSink, DataSource
from flagstaff_sdk.status import DataSourceState, DataSourceStatus, ErrorInfo
from flagstaff_sdk.test_data import FlagBuilder, TestData

__all__ = [
    "LAUNCHDARKLY",
    "AsyncClient",
    "Client",
    "Config",
    "ConfigError",
    "Context",
    "ContextBuilder",
    "DataFileError",
    "DataSink",
    "DataSource",
    "DataSourceState",
    "DataSourceStatus",
    "Endpoint",
    "ErrorInfo",
    "ErrorKind",
    "EvaluationDetail",
    "EventSink",
    "FeatureFlagsState",
    "FileSource",
    "FlagBuilder",
    "FlagChange",
    "FlagValueChange",
    "NullEventSink",
    "Reason",
    "ReasonKind",
    "SdkError",
    "TestData",
    "Timing",
    "ValueType",
]
