"""Observers of the servicer's calls: ``prometheus`` metrics, the ``calllog`` and the request
``journal``. They hang off the servicer's observer protocol; the servicer never imports them."""
