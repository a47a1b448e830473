import './base.css';
import './runs.css';
