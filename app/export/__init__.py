"""Export of captured XML to folders (profiles, patterns, the automatic queue), reports and the
hand-off to an office's ERP.

Above the capture (it reads the store and calls app.documents; it will call app.pdf), below the
demo and the desk; the capture never imports it: the service runs its job through the plain
``extra_jobs`` extension point of app.capture.jobs.
"""
