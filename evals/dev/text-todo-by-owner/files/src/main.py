# TODO(alice): split this module
import util.io  # todo(bob): drop this import

def main():
    # TODO(alice): handle errors
    pass
