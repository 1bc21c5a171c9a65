"""The version /version reports: the Toxiproxy API level it implements, tagged."""

VERSION = "2.12.0-tfchaos"
