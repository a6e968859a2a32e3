"""Game days (`flagstaff gameday`, docs/operations/gameday.md): a two-region topology of real
processes on loopback, faults injected at the network and process level, fleets of SDK clients
driven through them, and a report of what users saw.

One job per module: `fault_proxy` (network faults), `node` and `topology` (the processes),
`fleet`, `real_sdks` and `event_fleet` (the clients), `timeline` and `recorder` (what is
measured), `report`, `plot` and `report_page` (the report), `scenario` and `scenarios` (what
happens), `display` and `runner` (running it).
"""
