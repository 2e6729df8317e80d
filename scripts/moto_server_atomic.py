"""moto's S3 server (`moto_server`), with each PutObject handled under one lock.

moto (5.2.5, the newest on PyPI) checks `If-Match` / `If-None-Match` of a PutObject and then
stores the object in two steps, without a lock, in a threaded server: two conditional PUTs of
one key that arrive together can both pass the check, which real S3 never lets happen. The
zarr-rs tests of concurrent writers (compare-and-swap appends from four processes) need the
server to be atomic, as S3 is, so scripts/s3-server runs moto through this file: the same
server and arguments, with PutObject serialised. Everything else stays concurrent.
"""

import threading

from moto.s3.responses import S3Response
from moto.server import main

_LOCK = threading.Lock()
_PUT_OBJECT = S3Response.put_object


def _atomic_put_object(self, *args, **kwargs):
    with _LOCK:
        return _PUT_OBJECT(self, *args, **kwargs)


S3Response.put_object = _atomic_put_object

if __name__ == "__main__":
    main()
