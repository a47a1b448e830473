# The hub's queue service as docs/admin.md sets it up (hubservice.config), with a short interval
# so the tests need not wait 30 s for a second query, and a hub admin who may read its figures.
from ari_jupyter.hubservice.config import add_status_service

add_status_service(c, url="http://127.0.0.1:18095",  # noqa: F821
                   settings={"interval": 5, "hub_ceiling": 24, "user_ceiling": 24, "timeout": 4})
c.Authenticator.admin_users = {"ari-hubadmin"}  # noqa: F821
