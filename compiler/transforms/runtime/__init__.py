"""What generated source calls, named as it spells it: ad, lad, lah, vm."""
