"""The web UI: static HTML, CSS and JavaScript modules served by Flagstaff itself (`asgi`), which
call the management API with the session cookie. No build step; nothing here touches the store."""
