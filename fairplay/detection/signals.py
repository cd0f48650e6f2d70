"""What detection tells the rest of the server: ``flag_raised`` (keyword ``flag``, a
``fairplay.detection.flags.Flag``) when a pair or an account crosses a threshold."""

from __future__ import annotations

from django.dispatch import Signal

flag_raised = Signal()
