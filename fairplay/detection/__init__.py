"""Fair play's detection: signals of collusion and chip dumping as rebuildable projections of the
games' event log and the chips ledger, and the flags they raise (``signals.flag_raised``)."""
