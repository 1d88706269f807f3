"""Templates for the Hub cards (dataset card, leaderboard README), filled in at build time."""
