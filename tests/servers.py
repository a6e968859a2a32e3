"""Moved to `support.processes`, `support.threaded_servers`, `support.ports` and
`support.deadlines`; this name stays importable only while tests move over."""

from support.deadlines import eventually as eventually
from support.deadlines import wait_until as wait_until
from support.ports import free_port as free_port
from support.processes import START_TIMEOUT as START_TIMEOUT
from support.processes import STOP_TIMEOUT as STOP_TIMEOUT
from support.processes import FlagstaffProcess as FlagstaffProcess
from support.processes import PortTaken as PortTaken
from support.processes import ServeProcess as ServeProcess
from support.processes import flagstaff_command as flagstaff_command
from support.processes import loopback_get as loopback_get
from support.processes import running as running
from support.processes import status_answers as status_answers
from support.processes import stop_process as stop_process
from support.processes import wait_for_status as wait_for_status
from support.threaded_servers import ThreadedServer as ThreadedServer
from support.threaded_servers import serve_in_thread as serve_in_thread
