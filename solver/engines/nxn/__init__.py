"""Big cubes (N >= 4) by reduction: block-commutator centres, wing 3-cycles, a 3x3."""
