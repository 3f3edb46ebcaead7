"""Bug hunting: random loads with oracles, signatures and known bugs (issue 31).

``wrongresult`` holds the wrong-result oracles (NoREC, TLP, differential) over
generated SELECTs; the hunt mode's framework lives beside it.
"""
