print("incidents: not built yet")
