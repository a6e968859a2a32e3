"""Game days (`flagstaff gameday`, docs/operations/gameday.md): a two-region topology of real
processes on loopback, faults injected at the network and process level, fleets of SDK clients
driven through them, and a report of what users saw.

One job per module: `fault_proxy` (the network faults), more as the framework lands.
"""
