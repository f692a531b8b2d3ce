module example.com/scan
